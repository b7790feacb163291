package fork

import (
	"context"
)

// Check refuses what Fork would refuse before it writes anything (the
// request's form, the parent, sign-in, the cwd, the settings, the code
// plan), writing nothing itself: an exploration checks all its branches
// before it makes any. A requestId's replay is not looked at.
func (s *Service) Check(ctx context.Context, in Input) error {
	in, err := normalize(in)
	if err != nil {
		return err
	}
	parent, err := s.checkParent(ctx, in)
	if err != nil {
		return err
	}
	if err := s.accounts.CheckSignedIn(ctx, "fork the session"); err != nil {
		return err
	}
	if parent.Cwd, err = s.sessions.SessionCwd(ctx, parent); err != nil {
		return err
	}
	settings, err := in.Settings.Apply(parent.Settings)
	if err != nil {
		return err
	}
	if err := s.accounts.CheckModelSettings(ctx, settings); err != nil {
		return err
	}
	code, err := s.planCode(ctx, in, parent, s.newID())
	if err != nil {
		return err
	}
	code.Release()
	return nil
}
