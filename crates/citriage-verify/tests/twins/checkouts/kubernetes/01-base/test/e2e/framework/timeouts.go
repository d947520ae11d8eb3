/*
Copyright 2018 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
*/

package framework

import "time"

var defaultTimeouts = TimeoutContext{
	PodStart:      5 * time.Minute,
	PodStartShort: 2 * time.Minute,
	PodDelete:     5 * time.Minute,
	ClaimProvision: 5 * time.Minute,
	DataSourceProvision: 5 * time.Minute,
	SnapshotCreate: 5 * time.Minute,
}
