package main

import "context"

func (b *bench) schedule(ctx context.Context, dir string) error { return nil }
