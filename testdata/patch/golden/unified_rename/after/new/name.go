package new

var X = 1
