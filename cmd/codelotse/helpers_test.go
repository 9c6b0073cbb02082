package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/codelotse/codelotse/adapters/config"
	"github.com/rs/zerolog"
)

func mustConfig(t *testing.T, m map[string]string) config.Config {
	t.Helper()
	c, err := config.Load(env(m))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func discardLogger() zerolog.Logger { return zerolog.New(io.Discard) }

func httptestRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func mustRequest(t *testing.T, method, path string) *http.Request {
	t.Helper()
	return httptest.NewRequest(method, path, nil)
}
