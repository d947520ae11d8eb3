package utils








	// 10









	// 20









	// 30





	VolumeGroupSnapshotAPIVersion = "groupsnapshot.storage.k8s.io/v1beta2"



	// 40









	// 50









	// 60









	// 70









	// 80
