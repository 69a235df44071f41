package testkit

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// EnvInt reads a positive integer from the environment variable name, or
// returns def when it is unset; anything else fails the test or benchmark.
func EnvInt(t testing.TB, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// EnvDuration reads a positive duration such as 1m from the environment
// variable name, or returns def when it is unset.
func EnvDuration(t testing.TB, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration such as 1m", name, v)
	}
	return d
}
