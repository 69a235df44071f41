package main

import (
	"os"
	"testing"

	"github.com/flotilla-io/terraform-provider-flotilla/internal/testkit"
)

// TestMain removes the provider binary the fleet tests share
// (testkit.SharedProvider) once every test has run.
func TestMain(m *testing.M) {
	code := m.Run()
	testkit.RemoveSharedProvider()
	os.Exit(code)
}
