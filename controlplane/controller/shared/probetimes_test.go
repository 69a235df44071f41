package shared

import (
	"testing"
	"time"
)

func TestProbeTimes(t *testing.T) {
	p := NewProbeTimes()
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p.Record("east", at)
	if got, ok := p.LastProbe("east"); !ok || !got.Equal(at) {
		t.Errorf("east: %v %v, want %v", got, ok, at)
	}
	if _, ok := p.LastProbe("west"); ok {
		t.Error("west was never probed, yet has a time")
	}
	p.Forget("east")
	if _, ok := p.LastProbe("east"); ok {
		t.Error("a forgotten cluster keeps its time")
	}
	var none *ProbeTimes
	none.Record("east", at)
	none.Forget("east")
	if _, ok := none.LastProbe("east"); ok {
		t.Error("a nil record knows a time")
	}
}
