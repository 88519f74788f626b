package cli

import (
	"context"
	"errors"
)

func runReplay(ctx context.Context, env *Env, args []string) error {
	fs := env.newFlags("replay", "replay [flags]", "Not implemented yet.")
	if err := parse(fs, args); err != nil {
		return err
	}
	return errors.New("not implemented yet")
}
