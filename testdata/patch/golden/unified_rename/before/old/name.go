package old

var X = 1
