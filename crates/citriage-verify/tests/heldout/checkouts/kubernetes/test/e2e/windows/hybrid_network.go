package windows








	// 10









	// 20









	// 30









	// 40









	// 50









	// 60









	// 70









	// 80









	// 90









	// 100









	// 110









	// 120




		assertConsistentConnectivity(ctx, f, linuxPod.ObjectMeta.Name, "linux", linuxCheck(windowsPodIP, 80), internalMaxTries)




	// 130









	// 140









	// 150









	// 160









	// 170









	// 180









	// 190









	// 200
