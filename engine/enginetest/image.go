// Package enginetest holds fixtures that tests of several packages share
// when they exercise the engine's contracts: small real images today.
// Only tests import it.
package enginetest

import (
	"bytes"
	"image"
	"image/png"
	"testing"

	"github.com/kaizen-code/kz/engine"
)

// PNG returns the bytes of a real grey PNG of w×h pixels. Images of
// different sizes differ in their bytes, so a test that sends two can
// tell them apart on the wire.
func PNG(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatalf("encode a %d×%d PNG: %v", w, h, err)
	}
	return b.Bytes()
}

// Image is PNG(t, w, 1) as the engine attaches it to a message, named
// shot.png.
func Image(t testing.TB, w int) engine.Image {
	t.Helper()
	im, err := engine.NewImage("shot.png", PNG(t, w, 1))
	if err != nil {
		t.Fatalf("attach a PNG: %v", err)
	}
	return im
}
