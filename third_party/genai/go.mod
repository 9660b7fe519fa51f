module google.golang.org/genai

go 1.24

retract v1.11.0 // Retracted due to breaking change on GenerateVideos

require (
	cloud.google.com/go v0.116.0
	cloud.google.com/go/auth v0.9.3
	github.com/eliben/go-sentencepiece v0.7.0
	github.com/gorilla/websocket v1.5.3
)

require (
	cloud.google.com/go/compute/metadata v0.5.0 // indirect
	golang.org/x/net v0.38.0 // indirect
	golang.org/x/sys v0.31.0 // indirect
	google.golang.org/protobuf v1.34.2 // indirect
)
