package mcp

import (
	"os/exec"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var X = 1

func Local() any { return &sdk.CommandTransport{Command: exec.Command("wiki")} }

func Stdio() any { return &sdk.StdioTransport{} }

func Pipe() any { return &sdk.IOTransport{} }

func Named() any { return sdk.NewStdioServerTransport }
