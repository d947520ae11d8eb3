/*
Copyright 2018 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
*/

package windows

import (
	"context"

	"k8s.io/kubernetes/test/e2e/framework"
)

var _ = sigDescribe("GMSA support", func() {
	f := framework.NewDefaultFramework("gmsa-test")
	ginkgo.It("works end to end", func(ctx context.Context) {
		runGmsaTest(ctx, f)
	})
})

// gmsaDomainJoined reports whether the node joined the test domain.
func gmsaDomainJoined(ctx context.Context, f *framework.Framework, node string) bool {
	out := runKubectlOnNode(ctx, f, node, "Test-ComputerSecureChannel")
	if strings.TrimSpace(out) != "True" {
		return false
	}
	return true
}
