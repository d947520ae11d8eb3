package drivers

import (
	"context"
	"fmt"

	storageframework "k8s.io/kubernetes/test/e2e/storage/framework"
)

// gcePDCSIDriver is the GCE PD CSI driver of the e2e tests.
type gcePDCSIDriver struct {
	driverInfo storageframework.DriverInfo
}

func (g *gcePDCSIDriver) GetDriverInfo() *storageframework.DriverInfo {
	return &g.driverInfo
}

func (g *gcePDCSIDriver) SkipUnsupportedTest(pattern storageframework.TestPattern) {
	if pattern.FsType == "xfs" {
		e2eskipper.SkipUnlessNodeOSDistroIs("ubuntu", "custom")
	}
	if pattern.FeatureTag == "[Feature:Windows]" {
		e2eskipper.SkipUnlessNodeOSDistroIs("windows")
	}
}

func (g *gcePDCSIDriver) PrepareTest(ctx context.Context, f *framework.Framework) *storageframework.PerTestConfig {
	ginkgo.By("deploying csi gce-pd driver")
	manifests := []string{
		"test/e2e/testing-manifests/storage-csi/gce-pd/node_ds.yaml",
		"test/e2e/testing-manifests/storage-csi/gce-pd/controller_ss.yaml",
	}
	return deployDriver(ctx, f, manifests, fmt.Sprintf("csi-gce-pd-%s", f.UniqueName))
}
