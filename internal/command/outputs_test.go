package command

import (
	"errors"
	"io"
	"testing"
)

type closeFunc func() error

func (f closeFunc) Close() error { return f() }

func TestOutputs(t *testing.T) {
	var order []string
	var o Outputs
	for _, name := range []string{"a", "b", "c"} {
		o.Add(name, closeFunc(func() error {
			order = append(order, name)
			if name != "a" {
				return errors.New(name + " failed")
			}
			return nil
		}))
	}
	if err := o.Close(); err == nil || err.Error() != "closing b: b failed" {
		t.Errorf("Close: %v, want closing b's error", err)
	}
	if err := o.Close(); err != nil || len(order) != 3 {
		t.Errorf("second Close: %v, closed %q; want nil and each once", err, order)
	}
}

func TestFirstError(t *testing.T) {
	a, b := errors.New("a"), io.ErrUnexpectedEOF
	for _, tc := range []struct {
		errs []error
		want string
	}{
		{nil, ""},
		{[]error{nil, a, nil}, "a"},
		{[]error{a, nil, b}, "a\nmtrun: also: unexpected EOF"},
	} {
		err := FirstError("mtrun", tc.errs...)
		switch {
		case tc.want == "" && err != nil, tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("FirstError(%v) = %v, want %q", tc.errs, err, tc.want)
		case tc.want != "" && !errors.Is(err, a):
			t.Errorf("FirstError(%v) = %v does not wrap the first", tc.errs, err)
		}
	}
}
