package testsuites

import (
	"context"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"

	v1 "k8s.io/api/core/v1"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"
	e2eskipper "k8s.io/kubernetes/test/e2e/framework/skipper"
	storageframework "k8s.io/kubernetes/test/e2e/storage/framework"
)

type provisioningTestSuite struct {
	tsInfo storageframework.TestSuiteInfo
}

// InitProvisioningTestSuite returns the provisioning test suite.
func InitProvisioningTestSuite() storageframework.TestSuite {
	return &provisioningTestSuite{
		tsInfo: storageframework.TestSuiteInfo{Name: "provisioning"},
	}
}

func (p *provisioningTestSuite) GetTestSuiteInfo() storageframework.TestSuiteInfo {
	return p.tsInfo
}

func (p *provisioningTestSuite) DefineTests(driver storageframework.TestDriver, pattern storageframework.TestPattern) {
	ginkgo.It("should provision storage with snapshot data source", func(ctx context.Context) {
		if !driver.GetDriverInfo().Capabilities[storageframework.CapSnapshotDataSource] {
			e2eskipper.Skipf("Driver %q does not support snapshots - skipping", driver.GetDriverInfo().Name)
		}
		restoreAndCheck(ctx, driver, pattern)
	})

	ginkgo.It("should provision storage with any volume data source", func(ctx context.Context) {
		e2eskipper.SkipUnlessNodeOSDistroIs("gci", "ubuntu", "windows")
		restoreAndCheck(ctx, driver, pattern)
	})
}

func restoreAndCheck(ctx context.Context, driver storageframework.TestDriver, pattern storageframework.TestPattern) {
	pod := &v1.Pod{}
	mountPath := "/mnt/test"
	if isWindows(pod) {
		volumeID, err := getVolumeID(ctx, pod, mountPath)
		if err != nil {
			ginkgo.Fail(err.Error())
		}
		checkSize(ctx, pod, volumeID)
		return
	}
	checkSize(ctx, pod, mountPath)
}

// getVolumeID resolves the volume behind a mount path on a Windows node.
func getVolumeID(ctx context.Context, pod *v1.Pod, mountPath string) (string, error) {
	cmd := fmt.Sprintf(`(Get-Item -Path "%s").Target`, mountPath)
	out, err := e2epod.ExecCommandInContainerWithFullOutput(ctx, pod.Name, cmd)
	if err != nil {
		return "", err
	}
	target := strings.TrimSpace(out)
	if target == "" {
		return "", fmt.Errorf("resolved empty volumeID for mountPath %q", mountPath)
	}
	return target, nil
}

func isWindows(pod *v1.Pod) bool {
	return pod.Spec.NodeSelector["kubernetes.io/os"] == "windows"
}

func checkSize(ctx context.Context, pod *v1.Pod, target string) {
	ginkgo.By(fmt.Sprintf("checking the size of %s", target))
}
