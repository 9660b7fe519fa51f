package engine

import (
	"errors"
	"fmt"
	"time"
)

// ErrorKind classifies a runtime failure. The failover chain reads it: only
// retryable kinds move on to the next model or runtime.
type ErrorKind string

// Error kinds.
const (
	ErrRuntimeMissing  ErrorKind = "runtime_missing"
	ErrCrashed         ErrorKind = "crashed"
	ErrAuth            ErrorKind = "auth"
	ErrRateLimit       ErrorKind = "rate_limit"
	ErrOverloaded      ErrorKind = "overloaded"
	ErrContextTooLong  ErrorKind = "context_too_long"
	ErrBadRequest      ErrorKind = "bad_request"
	ErrDenied          ErrorKind = "denied"
	ErrInterrupted     ErrorKind = "interrupted"
	ErrCapability      ErrorKind = "capability"
	ErrInternal        ErrorKind = "internal"
	ErrProtocol        ErrorKind = "protocol"
	ErrLimitReached    ErrorKind = "limit"
	ErrInvalidArgument ErrorKind = "invalid_argument"
	// ErrStorage is kz's own failure to save the session (a full disk, a
	// damaged database), not the runtime's.
	ErrStorage ErrorKind = "storage"
)

// Retryable reports whether a failure of this kind may succeed on another
// model or runtime. A denial, an interrupt or a bad request never fails over:
// another runtime would only repeat it (or override the person).
func (k ErrorKind) Retryable() bool {
	switch k {
	case ErrRuntimeMissing, ErrCrashed, ErrAuth, ErrRateLimit, ErrOverloaded:
		return true
	}
	return false
}

// RuntimeError is a classified failure of a runtime.
type RuntimeError struct {
	Kind    ErrorKind
	Runtime string
	Model   string
	Message string
	// RetryAfter is the provider's hint, if any.
	RetryAfter time.Duration
	Err        error
}

// Error renders the failure on one line.
func (e *RuntimeError) Error() string {
	who := e.Runtime
	if e.Model != "" {
		who += "/" + e.Model
	}
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if who == "" {
		return fmt.Sprintf("%s: %s", e.Kind, msg)
	}
	return fmt.Sprintf("%s: %s: %s", who, e.Kind, msg)
}

// Unwrap returns the underlying error.
func (e *RuntimeError) Unwrap() error { return e.Err }

// KindOf returns the kind of a classified error, or ErrInternal.
func KindOf(err error) ErrorKind {
	var re *RuntimeError
	if errors.As(err, &re) {
		return re.Kind
	}
	var ce *CapabilityError
	if errors.As(err, &ce) {
		return ErrCapability
	}
	var ve *VisionError
	if errors.As(err, &ve) {
		return ErrCapability
	}
	return ErrInternal
}
