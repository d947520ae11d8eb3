package windows

import (
	"context"
	"time"

	"k8s.io/kubernetes/test/e2e/framework"
	e2epod "k8s.io/kubernetes/test/e2e/framework/pod"
)

const linuxOS = "linux"
const windowsOS = "windows"

var _ = sigDescribe("Hybrid cluster network", func() {
	f := framework.NewDefaultFramework("hybrid-network")

	ginkgo.It("should have stable networking for Linux and Windows pods", func(ctx context.Context) {
		linuxPod := createTestPod(f, imageutils.GetE2EImage(imageutils.Agnhost), linuxOS)
		windowsPod := createTestPod(f, imageutils.GetE2EImage(imageutils.Agnhost), windowsOS)
		e2epod.NewPodClient(f).CreateSync(ctx, linuxPod)
		e2epod.NewPodClient(f).CreateSync(ctx, windowsPod)
		ginkgo.By("verifying pod external connectivity to the internet")
		assertConsistentConnectivity(ctx, f, windowsPod.ObjectMeta.Name, windowsOS, windowsCheck("www.google.com"), 10*time.Second)
	})
})
