package kuberuntime

import (
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// verifyRunAsNonRoot checks the Windows security context of a container.
func verifyWindowsRunAs(uid *int64, username string) error {
	if uid != nil {
		return fmt.Errorf("run as user %d is not supported on Windows", *uid)
	}
	if username == "ContainerAdministrator" {
		return fmt.Errorf("container's runAsUserName (%s) which will be regarded as root identity and will break non-root policy", username)
	}
	return nil
}

func applyWindowsSecurityContext(config *runtimeapi.WindowsContainerConfig) {
	if config.SecurityContext == nil {
		config.SecurityContext = &runtimeapi.WindowsContainerSecurityContext{}
	}
}
