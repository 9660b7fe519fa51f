module github.com/alecthomas/chroma/v2

go 1.19

require github.com/dlclark/regexp2 v1.11.0
