// Command hello is the test image's binary.
package main

import "fmt"

func main() { fmt.Println("hello") }
