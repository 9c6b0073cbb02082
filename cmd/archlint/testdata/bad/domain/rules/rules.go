package rules

import (
	"database/sql"
	"net/http"
	"time"

	"example.com/bad/adapters/mcp"
	"github.com/rs/zerolog"
	"github.com/uptrace/bun"
)

var _ = sql.ErrNoRows
var _ = http.StatusOK
var _ = mcp.X
var _ zerolog.Logger
var _ bun.IDB

func Stamp() time.Time { return time.Now() }
