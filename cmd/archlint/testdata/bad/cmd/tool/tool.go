package tool

var Y = 2
