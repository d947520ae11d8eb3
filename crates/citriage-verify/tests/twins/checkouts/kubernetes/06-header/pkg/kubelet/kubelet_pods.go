/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
*/

package kubelet

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// podIPsReady reports whether a pod can be given its status IPs.
func (kl *Kubelet) podIPsReady(pod *v1.Pod, status *v1.PodStatus) bool {
	if status == nil {
		return false
	}
	if kl.isHostNetwork(pod) {
		return true
	}

	if !kl.sandboxReady(pod) {
		klog.V(4).InfoS("Pod sandbox is not ready", "pod", klog.KObj(pod))
		return false
	}
	if len(status.PodIPs) == 0 {
		klog.V(4).InfoS("Pod has no IPs", "pod", klog.KObj(pod))
		return false
	}
	return true
}

func (kl *Kubelet) sandboxReady(pod *v1.Pod) bool {
	return kl.runtimeState.sandboxReady(fmt.Sprintf("%s/%s", pod.Namespace, pod.Name))
}
