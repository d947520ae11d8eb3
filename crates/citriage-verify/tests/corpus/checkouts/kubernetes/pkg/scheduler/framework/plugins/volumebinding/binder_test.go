package volumebinding

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

type testEnv struct {
	binder SchedulerVolumeBinder
}

func newTestBinder(t *testing.T, ctx context.Context) *testEnv {
	return &testEnv{binder: NewVolumeBinder(ctx)}
}

func TestBindPodVolumes(t *testing.T) {
	scenarios := map[string]struct {
		pod          *v1.Pod
		shouldFail   bool
		bindingDelay time.Duration
	}{
		"nothing-to-bind": {pod: &v1.Pod{}},
		"binding-slow":    {pod: &v1.Pod{}, bindingDelay: 2 * time.Second},
	}
	for name, scenario := range scenarios {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			env := newTestBinder(t, ctx)
			err := env.binder.BindPodVolumes(ctx, scenario.pod)
			if err != nil && !scenario.shouldFail {
				t.Errorf("unexpected error: %v", err)
			}
		})
	}
}

func TestFindPodVolumes(t *testing.T) {
	ctx := context.Background()
	env := newTestBinder(t, ctx)
	if _, err := env.binder.FindPodVolumes(ctx, &v1.Pod{}); err != nil {
		t.Fatal(err)
	}
}
