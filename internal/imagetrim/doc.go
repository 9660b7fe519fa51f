// Package imagetrim gives back the pages of kz's executable that a TUI at
// rest has mapped but does not use.
//
// Loading and starting kz maps pages of its executable as the code and
// data in them are first touched, and the kernel maps the pages around
// each fault too (64 KB), so a kz that has started, drawn its first
// frame and come to rest has about 29 MB of the binary mapped, most of
// which it will not touch again until the next frame. Those pages are the
// page cache's: dropping the mappings of the clean read-only ones
// (MADV_DONTNEED) frees nothing from the cache and loses nothing, and the
// next frame maps back, by minor faults, the pages it touches.
package imagetrim
