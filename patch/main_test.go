package patch

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if crashChild(m) {
		return
	}
	goleak.VerifyTestMain(m)
}
