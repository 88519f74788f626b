//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestMain runs main instead of the tests when FINREPRO_RUN_MAIN is set,
// so that a test can start the command as a child process.
func TestMain(m *testing.M) {
	if os.Getenv("FINREPRO_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestInterrupt starts "cache load" on a standard input that never ends
// (a command that does not watch for Ctrl-C) and interrupts it: the
// process ends within about a second, with exit code 130. A signal that
// arrives before main has set up its handler kills the process by the
// default action (exit -1); on a busy machine that can take longer than
// the first wait, so the attempt is repeated with a longer one.
func TestInterrupt(t *testing.T) {
	for _, wait := range []time.Duration{300 * time.Millisecond, time.Second, 3 * time.Second} {
		code, took, ok := interruptAfter(t, wait)
		if !ok {
			t.Fatal("still running 10 s after the interrupt")
		}
		if code == -1 {
			continue // interrupted before main set up its handler
		}
		if took > 2500*time.Millisecond { // one second of grace, and room for a busy machine
			t.Errorf("ended %v after the interrupt", took)
		}
		if code != exitInterrupted {
			t.Errorf("exit %d, want %d", code, exitInterrupted)
		}
		return
	}
	t.Fatal("killed by the signal every time: main never set up its handler")
}

// interruptAfter starts the command, sends SIGINT after wait and returns
// its exit code and how long it took to end; ok is false when it did not
// end within 10 s.
func interruptAfter(t *testing.T, wait time.Duration) (code int, took time.Duration, ok bool) {
	cmd := exec.Command(os.Args[0], "cache", "load", "--dir", t.TempDir())
	cmd.Env = append(os.Environ(), "FINREPRO_RUN_MAIN=1")
	stdin, err := cmd.StdinPipe() // held open: the load waits for more
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(wait)
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode(), time.Since(start), true
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		return 0, 0, false
	}
}
