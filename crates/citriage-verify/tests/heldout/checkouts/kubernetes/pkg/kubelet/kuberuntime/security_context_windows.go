package kuberuntime








	// 10









	// 20









	// 30









	// 40









	// 50









	// 60









	// 70

		return fmt.Errorf("run as uid (%d) is not supported on Windows", *effectiveSc.RunAsUser)







	// 80









	// 90









	// 100
