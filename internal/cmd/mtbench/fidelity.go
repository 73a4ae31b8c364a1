package main

import "context"

func (b *bench) fidelity(ctx context.Context, dir string) error { return nil }
