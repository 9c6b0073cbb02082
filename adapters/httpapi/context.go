package httpapi

import "context"

func contextWithInfo(ctx context.Context, info *requestInfo) context.Context {
	return context.WithValue(ctx, requestInfoKey{}, info)
}

// setLogTenant records the request's tenant for the request log line.
func setLogTenant(ctx context.Context, tenantID string) {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		info.tenantID = tenantID
	}
}

// logTenant is the tenant setLogTenant recorded, or "".
func logTenant(ctx context.Context) string {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return info.tenantID
	}
	return ""
}
