#!/bin/sh
go run .
