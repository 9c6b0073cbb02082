package web

import (
	"net/http"

	"github.com/codelotse/codelotse/app"
)

// refused shows a form again with the refusal; an internal error and a
// database outage are pages of their own.
func (u *UI) refused(w http.ResponseWriter, r *http.Request, c *caller, err error, name string, data any) {
	e := app.AsError(err)
	switch e.Code {
	case app.CodeInternal, app.CodeUnavailable:
		u.internal(w, r, c, err)
	case app.CodeNotFound:
		u.notFound(w, r, c)
	default:
		if data == nil {
			data = messagePage{Heading: "Refused", Text: string(e.Code) + ": " + e.Message}
		}
		u.render(w, r, e.Code.Status(), name, c, data)
	}
}

func (u *UI) notFound(w http.ResponseWriter, r *http.Request, c *caller) {
	u.render(w, r, http.StatusNotFound, "message", c, messagePage{Heading: "Not found", Text: "There is no such item in your organisation."})
}
