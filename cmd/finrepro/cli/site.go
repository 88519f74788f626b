package cli

import (
	"context"
	"errors"
)

func runSite(ctx context.Context, env *Env, args []string) error {
	fs := env.newFlags("site", "site [flags]", "Not implemented yet.")
	if err := parse(fs, args); err != nil {
		return err
	}
	return errors.New("not implemented yet")
}
