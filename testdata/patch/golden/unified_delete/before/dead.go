package main

func dead() {}
