package util

func Shout(s string) string { return s + "!" }
