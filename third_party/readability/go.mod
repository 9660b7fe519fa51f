module codeberg.org/readeck/go-readability/v2

go 1.23.0

require (
	github.com/go-shiori/dom v0.0.0-20230515143342-73569d674e1c
	github.com/itlightning/dateparse v0.2.1
	golang.org/x/net v0.41.0
)

require (
	github.com/andybalholm/cascadia v1.3.3 // indirect
	github.com/gogs/chardet v0.0.0-20211120154057-b7413eaefb8f // indirect
	golang.org/x/text v0.26.0 // indirect
)
