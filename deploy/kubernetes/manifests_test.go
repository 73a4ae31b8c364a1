// Package kubernetes holds the tests of mtkit's Kubernetes manifests and
// container image definition. It is a module of its own, so that the
// Kubernetes API types it decodes into are not dependencies of mtkit;
// scripts/test.sh runs it as a separate step.
package kubernetes

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// documents splits a YAML stream into its documents.
func documents(t *testing.T, data []byte) [][]byte {
	t.Helper()
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

func stripComments(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// objects are the decoded documents by kind.
type objects struct {
	jobs       []*batchv1.Job
	pods       []*corev1.Pod
	pvcs       []*corev1.PersistentVolumeClaim
	configMaps []*corev1.ConfigMap
}

// decode decodes every document strictly (unknown or duplicate fields
// are errors) into its Kubernetes API type.
func decode(t *testing.T, name string, data []byte) *objects {
	t.Helper()
	var o objects
	for i, doc := range documents(t, data) {
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatalf("%s: document %d: %v", name, i+1, err)
		}
		var obj any
		switch head.APIVersion + " " + head.Kind {
		case "batch/v1 Job":
			j := &batchv1.Job{}
			o.jobs, obj = append(o.jobs, j), j
		case "v1 Pod":
			p := &corev1.Pod{}
			o.pods, obj = append(o.pods, p), p
		case "v1 PersistentVolumeClaim":
			p := &corev1.PersistentVolumeClaim{}
			o.pvcs, obj = append(o.pvcs, p), p
		case "v1 ConfigMap":
			c := &corev1.ConfigMap{}
			o.configMaps, obj = append(o.configMaps, c), c
		default:
			t.Fatalf("%s: document %d: unexpected %s %s", name, i+1, head.APIVersion, head.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			t.Fatalf("%s: document %d (%s): %v", name, i+1, head.Kind, err)
		}
	}
	return &o
}

func TestFilesDecodeStrictly(t *testing.T) {
	for _, tc := range []struct {
		file                  string
		jobs, pods, pvcs, cms int
	}{
		{"job.yaml", 1, 0, 0, 0},
		{"pvc.yaml", 0, 0, 1, 0},
		{"report.yaml", 0, 1, 0, 0},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		o := decode(t, tc.file, data)
		if len(o.jobs) != tc.jobs || len(o.pods) != tc.pods || len(o.pvcs) != tc.pvcs || len(o.configMaps) != tc.cms {
			t.Errorf("%s: %d jobs, %d pods, %d PVCs, %d ConfigMaps", tc.file, len(o.jobs), len(o.pods), len(o.pvcs), len(o.configMaps))
		}
	}
}

// TestStrictDecodingRejects shows that the decoding above would catch a
// misspelt or misplaced field.
func TestStrictDecodingRejects(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: batch/v1\nkind: Job\nspec:\n  completionMod: Indexed\n",
		"apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    spec:\n      containers:\n        - name: x\n          arg: [a]\n",
		"apiVersion: batch/v1\nkind: Job\nspec:\n  completions: \"4\"\n",
	} {
		if err := yaml.UnmarshalStrict([]byte(doc), &batchv1.Job{}); err == nil {
			t.Errorf("accepted:\n%s", doc)
		}
	}
}

// settings reads settings.env.
func settings(t *testing.T, dir string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "settings.env"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("settings.env:%d: not KEY=value", n)
		}
		m[k] = v
	}
	return m
}

// kustomize renders dir with kubectl kustomize.
func kustomize(t *testing.T, dir string) []byte {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not found: the kustomization is not rendered (the files are still decoded by TestFilesDecodeStrictly)")
	}
	out, err := exec.Command(kubectl, "kustomize", dir).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr)
	}
	return out
}

var varRef = regexp.MustCompile(`\$\(([A-Z_][A-Z0-9_]*)\)`)

// TestKustomization renders the kustomization and checks the fields
// docs/scale-out.md relies on.
func TestKustomization(t *testing.T) {
	for _, segments := range []string{"", "6"} {
		t.Run("SEGMENTS="+segments, func(t *testing.T) {
			dir := "."
			if segments != "" {
				dir = copyDir(t, ".")
				env := settings(t, dir)
				env["SEGMENTS"] = segments
				writeSettings(t, dir, env)
			}
			env := settings(t, dir)
			o := decode(t, "kubectl kustomize", kustomize(t, dir))
			if len(o.jobs) != 1 || len(o.pvcs) != 1 || len(o.configMaps) != 2 || len(o.pods) != 0 {
				t.Fatalf("rendered %d jobs, %d PVCs, %d ConfigMaps, %d pods", len(o.jobs), len(o.pvcs), len(o.configMaps), len(o.pods))
			}
			checkJob(t, o, env)
		})
	}
}

func checkJob(t *testing.T, o *objects, env map[string]string) {
	t.Helper()
	j := o.jobs[0]
	s := j.Spec
	n := env["SEGMENTS"]
	switch {
	case s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion:
		t.Error("completionMode is not Indexed")
	case s.Completions == nil || s.Parallelism == nil || fmt.Sprint(*s.Completions) != n || fmt.Sprint(*s.Parallelism) != n:
		t.Errorf("completions %v, parallelism %v; want SEGMENTS=%s", s.Completions, s.Parallelism, n)
	case s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 0:
		t.Error("backoffLimitPerIndex is not 0")
	case s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever:
		t.Errorf("restartPolicy %q", s.Template.Spec.RestartPolicy)
	}
	aa := s.Template.Spec.Affinity
	if aa == nil || aa.PodAntiAffinity == nil || len(aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		t.Error("no pod anti-affinity")
	} else if sel := aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector; sel == nil ||
		sel.MatchLabels["app.kubernetes.io/name"] != s.Template.Labels["app.kubernetes.io/name"] {
		t.Error("the anti-affinity does not select the Job's own pods")
	}
	if len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(s.Template.Spec.Containers))
	}
	c := s.Template.Spec.Containers[0]
	if c.Image != "registry.example.com/mtkit:latest" {
		t.Errorf("image %q: the kustomization's images entry did not apply", c.Image)
	}
	if !slices.Equal(c.Command, []string{"mtrun"}) {
		t.Errorf("command %q", c.Command)
	}
	for _, want := range []string{"--segments=$(SEGMENTS)", "--start-at=$(START_AT)", "--run-id=$(RUN_ID)", "--seed=$(SEED)", "--url=$(URL)"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("args %q lack %s", c.Args, want)
		}
	}
	// Every $(VAR) of the args is defined: from the settings ConfigMap or
	// the container's env (else Kubernetes leaves it as is).
	defined := map[string]bool{}
	for _, e := range c.Env {
		defined[e.Name] = true
	}
	settingsCM := ""
	for _, ef := range c.EnvFrom {
		if ef.ConfigMapRef != nil {
			settingsCM = ef.ConfigMapRef.Name
		}
	}
	cms := map[string]*corev1.ConfigMap{}
	for _, cm := range o.configMaps {
		cms[cm.Name] = cm
	}
	if cm := cms[settingsCM]; cm == nil {
		t.Errorf("envFrom names ConfigMap %q, which is not rendered", settingsCM)
	} else {
		for k := range cm.Data {
			defined[k] = true
		}
		if cm.Data["SEGMENTS"] != n {
			t.Errorf("settings ConfigMap SEGMENTS %q, settings.env %q", cm.Data["SEGMENTS"], n)
		}
	}
	for _, a := range c.Args {
		for _, m := range varRef.FindAllStringSubmatch(a, -1) {
			if !defined[m[1]] {
				t.Errorf("arg %q: $(%s) is not defined", a, m[1])
			}
		}
	}
	// The records file name is per segment, from the completion index.
	var seg *corev1.EnvVar
	for i := range c.Env {
		if c.Env[i].Name == "SEGMENT" {
			seg = &c.Env[i]
		}
	}
	if seg == nil || seg.ValueFrom == nil || seg.ValueFrom.FieldRef == nil ||
		seg.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Error("SEGMENT is not the completion index annotation")
	}
	if !slices.ContainsFunc(c.Args, func(a string) bool {
		return strings.HasPrefix(a, "--records=/records/") && strings.Contains(a, "$(SEGMENT)")
	}) {
		t.Errorf("args %q: records not per segment under /records", c.Args)
	}
	// Volumes: the input ConfigMap holds the file the args read, the
	// records claim is the rendered PVC.
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	for _, v := range s.Template.Spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			cm := cms[v.ConfigMap.Name]
			if cm == nil {
				t.Errorf("volume %s: ConfigMap %q not rendered", v.Name, v.ConfigMap.Name)
				continue
			}
			for k := range cm.Data {
				if p := mounts[v.Name] + "/" + k; !slices.Contains(c.Args, p) {
					t.Errorf("the input %s is not an argument of mtrun (%q)", p, c.Args)
				}
			}
		case v.PersistentVolumeClaim != nil:
			if v.PersistentVolumeClaim.ClaimName != o.pvcs[0].Name || mounts[v.Name] != "/records" {
				t.Errorf("volume %s: claim %q at %q", v.Name, v.PersistentVolumeClaim.ClaimName, mounts[v.Name])
			}
			if !slices.Contains(o.pvcs[0].Spec.AccessModes, corev1.ReadWriteMany) {
				t.Error("the records volume is not ReadWriteMany: the pods of several nodes cannot share it")
			}
		}
	}
}

// TestFlagsExist checks that every flag the manifests pass exists in
// mtrun's and mtstats's help.
func TestFlagsExist(t *testing.T) {
	help, err := os.ReadFile("../../cmd/mtrun/testdata/help.stdout")
	if err != nil {
		t.Fatal(err)
	}
	o := decode(t, "job.yaml", must(os.ReadFile("job.yaml")))
	for _, a := range o.jobs[0].Spec.Template.Spec.Containers[0].Args {
		if !strings.HasPrefix(a, "--") {
			continue
		}
		flag, _, _ := strings.Cut(a, "=")
		if !bytes.Contains(help, []byte("   "+flag+" ")) && !bytes.Contains(help, []byte("   "+flag+",")) {
			t.Errorf("job.yaml passes %s, which mtrun --help does not list", flag)
		}
	}
	// report.yaml reads the files job.yaml writes for settings.env's RUN_ID.
	env := settings(t, ".")
	r := decode(t, "report.yaml", must(os.ReadFile("report.yaml")))
	want := "/records/" + env["RUN_ID"] + "-seg-*.jsonl.zst"
	if args := r.pods[0].Spec.Containers[0].Args; !slices.Contains(args, want) {
		t.Errorf("report.yaml args %q, want %s (the RUN_ID of settings.env)", args, want)
	}
}

// TestDockerfile checks the image definition: a golang build stage
// making every tool under cmd/ with CGO_ENABLED=0 (pure Go: static
// binaries), and a final stage without libc (distroless static or
// scratch).
func TestDockerfile(t *testing.T) {
	df := string(must(os.ReadFile("../../Dockerfile")))
	var froms []string
	for line := range strings.Lines(df) {
		if f, ok := strings.CutPrefix(line, "FROM "); ok {
			froms = append(froms, strings.TrimSpace(f))
		}
	}
	if len(froms) < 2 || !strings.HasPrefix(froms[0], "golang:") {
		t.Fatalf("stages %q: want a golang build stage and a final stage", froms)
	}
	if last := froms[len(froms)-1]; !strings.HasPrefix(last, "gcr.io/distroless/static") && last != "scratch" {
		t.Errorf("final stage %q: want distroless static or scratch", last)
	}
	if !strings.Contains(df, "CGO_ENABLED=0") {
		t.Error("no CGO_ENABLED=0")
	}
	tools, _ := filepath.Glob("../../cmd/mt*")
	if len(tools) != 4 {
		t.Errorf("%d tools under cmd/: %q", len(tools), tools)
	}
	for _, tool := range tools {
		if !strings.Contains(df, " ./cmd/"+filepath.Base(tool)) {
			t.Errorf("the Dockerfile does not build %s", filepath.Base(tool))
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// copyDir copies the kustomization's files to a temporary directory.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	for _, n := range []string{"kustomization.yaml", "job.yaml", "pvc.yaml", "settings.env", "conversations.json"} {
		if err := os.WriteFile(filepath.Join(out, n), must(os.ReadFile(filepath.Join(dir, n))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func writeSettings(t *testing.T, dir string, env map[string]string) {
	t.Helper()
	var b strings.Builder
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range env {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "%s=%s\n", k, env[k])
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.env"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
