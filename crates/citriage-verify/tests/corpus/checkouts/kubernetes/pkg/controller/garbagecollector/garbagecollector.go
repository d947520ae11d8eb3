package garbagecollector

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// GarbageCollector deletes objects whose owners are gone.
type GarbageCollector struct {
	dependencyGraphBuilder *GraphBuilder
	attemptToDelete        chan *node
	attemptToOrphan        chan *node
}

// Run starts the workers and blocks until the context is done.
func (gc *GarbageCollector) Run(ctx context.Context, workers int) {
	klog.FromContext(ctx).Info("Starting controller", "controller", "garbagecollector")
	if !gc.waitForSync(ctx, 30*time.Second) {
		return
	}
	for i := 0; i < workers; i++ {
		go wait.UntilWithContext(ctx, gc.runAttemptToDeleteWorker, time.Second)
		go wait.Until(gc.runAttemptToOrphanWorker, time.Second, ctx.Done())
	}
	<-ctx.Done()
}

func (gc *GarbageCollector) waitForSync(ctx context.Context, timeout time.Duration) bool {
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		return gc.dependencyGraphBuilder.IsSynced(), nil
	})
	return err == nil
}

func (gc *GarbageCollector) runAttemptToDeleteWorker(ctx context.Context) {
	for n := range gc.attemptToDelete {
		if err := gc.attemptToDeleteItem(ctx, n); err != nil {
			klog.FromContext(ctx).Error(err, "attempt to delete failed", "item", n.identity)
		}
	}
}

func (gc *GarbageCollector) runAttemptToOrphanWorker() {
	for n := range gc.attemptToOrphan {
		if err := gc.orphanDependents(n); err != nil {
			fmt.Printf("orphan failed for %v: %v\n", n.identity, err)
		}
	}
}
