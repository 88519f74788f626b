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
// process ends within about a second.
func TestInterrupt(t *testing.T) {
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
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		if d := time.Since(start); d > 2500*time.Millisecond { // one second of grace, and room for a busy machine
			t.Errorf("ended %v after the interrupt", d)
		}
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
			t.Errorf("exit %d, want %d", code, exitInterrupted)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("still running 10 s after the interrupt")
	}
}
