package main

import (
	"fmt"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"time"
)

// heapSample is the runtime metric the heap hook watches: bytes held by
// live and not yet swept heap objects, the part of RSS the provider's own
// allocations decide.
const heapSample = "/memory/classes/heap/objects:bytes"

// startHeapProfile writes a heap profile to path.<pid> each time the heap
// grows a tenth past the largest one written, so the file left at the end
// shows what the heap held near its peak (a profile at exit would show a
// heap already released), and path.<pid>.hwm gets the process' peak RSS
// (VmHWM) when the returned function is called: terraform's own peak is
// then the command's peak when it is larger. A developer's hook, like the
// CPU profile.
func startHeapProfile(path string) func() {
	name := fmt.Sprintf("%s.%d", path, os.Getpid())
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		sample := []metrics.Sample{{Name: heapSample}}
		var written uint64
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				return
			}
			if heap := sample[0].Value.Uint64(); heap > written+written/10 {
				if writeHeapProfile(name) == nil {
					written = heap
				}
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		if status, err := os.ReadFile("/proc/self/status"); err == nil {
			for line := range strings.SplitSeq(string(status), "\n") {
				if strings.HasPrefix(line, "VmHWM:") {
					_ = os.WriteFile(name+".hwm", []byte(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))+"\n"), 0o600)
				}
			}
		}
	}
}

// writeHeapProfile replaces the heap profile at name.
func writeHeapProfile(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
