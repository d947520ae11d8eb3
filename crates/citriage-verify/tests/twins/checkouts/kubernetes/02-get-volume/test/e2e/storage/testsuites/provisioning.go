/*
Copyright 2018 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
*/

package testsuites

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/kubernetes/test/e2e/framework"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"
	e2eskipper "k8s.io/kubernetes/test/e2e/framework/skipper"
	storageframework "k8s.io/kubernetes/test/e2e/storage/framework"
)

type provisioningTestSuite struct {
	tsInfo storageframework.TestSuiteInfo
}

// DefineTests defines the provisioning tests of a driver.
func (p *provisioningTestSuite) DefineTests(driver storageframework.TestDriver, pattern storageframework.TestPattern) {
	f := framework.NewDefaultFramework("provisioning")

	ginkgo.It("should provision storage with snapshot data source", func(ctx context.Context) {
		init(ctx)
		defer cleanup()
		testProvisioningFromSnapshot(ctx, f, l.sc, l.pvc)
	})

	ginkgo.It("should restore a snapshot to a larger size", func(ctx context.Context) {
		init(ctx)
		defer cleanup()
		if !dInfo.Capabilities[storageframework.CapSnapshotDataSource] {
			e2eskipper.Skipf("Driver %q does not support populating data from snapshot - skipping", dInfo.Name)
		}
		if !dInfo.SupportedSizeRange.Max.IsZero() {
			e2eskipper.Skipf("Driver %q has no size limit to test against - skipping", dInfo.Name)
		}
		restoreLargerSize(ctx, f, l.sc, l.pvc)
	})
}

// getVolumeID returns the volume behind a mount path on a Windows node.
func getVolumeID(ctx context.Context, f *framework.Framework, pod *v1.Pod, mountPath string) (string, error) {
	cmd := fmt.Sprintf("(Get-Volume -FilePath \"%s\").UniqueId", mountPath)
	out, err := e2epod.ExecCommandInContainerWithFullOutput(f, pod.Name, pod.Spec.Containers[0].Name, "powershell", "-Command", cmd)
	if err != nil {
		return "", err
	}
	volumeID := strings.TrimSpace(out)
	if volumeID == "" {
		return "", fmt.Errorf("resolved empty volumeID for mountPath %q", mountPath)
	}
	return volumeID, nil
}
