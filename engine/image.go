package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Image is one image attached to a user message. Its bytes travel in
// memory only: the JSON form (the stream-json output, the event stored in
// the events table) carries what the image is and where the store keeps
// it, never the bytes, so that a session with screenshots does not bloat
// every event read.
type Image struct {
	// MediaType is image/png, image/jpeg, image/gif or image/webp, as
	// sniffed from the content (never taken from the file name).
	MediaType string `json:"media_type"`
	// Name is the file's base name, for the transcript and the chip.
	Name string `json:"name,omitempty"`
	// Size is len(Data) in bytes.
	Size int `json:"size"`
	// SHA256 is the hex digest of Data: it names the image in the store,
	// which keeps one copy per session however often it is sent.
	SHA256 string `json:"sha256"`
	// Ref is where the store keeps the bytes ("artifact:N"); the store
	// sets it when it persists the message.
	Ref string `json:"ref,omitempty"`
	// Data is the image itself. It is never marshalled.
	Data []byte `json:"-"`
}

// MaxImageBytes caps one attached image. Anthropic refuses images above
// 5 MB and the other providers' inline limits are of the same order; a
// larger file is refused before a turn starts rather than by the provider
// after it.
const MaxImageBytes = 5 << 20

// MaxImages caps the images of one message (Anthropic accepts at most 20
// per request when several are large; 20 is the common bound).
const MaxImages = 20

// ErrNotImage is matched (errors.Is) by NewImage's error when the content
// is not one of the image formats kz sends.
var ErrNotImage = errors.New("not a PNG, JPEG, GIF or WebP image")

// imageTypes are the media types every vision provider accepts.
var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// SniffImage returns the media type of data when its content is a PNG,
// JPEG, GIF or WebP image, and ErrNotImage otherwise. The content decides,
// as the WHATWG sniffing algorithm does: a PNG named .jpg is a PNG, a text
// file named .png is not an image.
func SniffImage(data []byte) (string, error) {
	mt := http.DetectContentType(data)
	for _, t := range imageTypes {
		if mt == t {
			return t, nil
		}
	}
	return "", ErrNotImage
}

// NewImage checks data and builds the Image: the content must be an image
// kz sends and at most MaxImageBytes. name is only a label.
func NewImage(name string, data []byte) (Image, error) {
	if len(data) > MaxImageBytes {
		return Image{}, fmt.Errorf("image %s is %s, more than the %s a message may carry", name, FormatBytes(int64(len(data))), FormatBytes(MaxImageBytes))
	}
	mt, err := SniffImage(data)
	if err != nil {
		return Image{}, fmt.Errorf("%s: %w", name, err)
	}
	sum := sha256.Sum256(data)
	return Image{MediaType: mt, Name: name, Size: len(data), SHA256: hex.EncodeToString(sum[:]), Data: data}, nil
}

// Label renders the image as the transcript and the input show it:
// "[image: shot.png 120 KB]".
func (im Image) Label() string {
	name := im.Name
	if name == "" {
		name = strings.TrimPrefix(im.MediaType, "image/")
	}
	return "[image: " + name + " " + FormatBytes(int64(im.Size)) + "]"
}

// FormatBytes renders a size in B, KB or MB (powers of 1024, as file
// managers show them), rounded.
func FormatBytes(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%d KB", (n+512)/1024)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
}

// UserMessage is what the person sends: text and the images attached to
// it.
type UserMessage struct {
	Text   string
	Images []Image
}

// VisionError says a message carries images but the runtime that would
// answer it cannot see them. The turn does not start: sending the text
// alone would answer a question the model cannot see.
type VisionError struct {
	Runtime string
	Model   string
	Images  int
	// Capable lists the configured runtimes that have vision, for the
	// person to switch to.
	Capable []string
}

// Error renders the one message the CLI and the TUI show.
func (e *VisionError) Error() string {
	name := e.Runtime
	if e.Model != "" {
		name += " (model " + e.Model + ")"
	}
	n := "images"
	switch {
	case e.Images == 1:
		n = "an image"
	case e.Images > 1:
		n = fmt.Sprintf("%d images", e.Images)
	}
	msg := fmt.Sprintf("the message has %s, but runtime %s has no %s capability; ", n, name, CapVision)
	if len(e.Capable) > 0 {
		return msg + "switch to " + strings.Join(e.Capable, " or ") + ", or send the message without images"
	}
	return msg + "no configured runtime has it: configure a model with vision (kz runtimes), or send the message without images"
}
