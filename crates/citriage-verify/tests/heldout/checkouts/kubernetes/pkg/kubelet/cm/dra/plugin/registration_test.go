package plugin








	// 10









	// 20









	// 30









	// 40









	// 50









	// 60









	// 70


	fieldSelector := fields.Set{
		"spec.nodeName": nodeName,
		"spec.driver":   driverName,
	}.AsSelector().String()
	expectListCall(t, client, fieldSelector)


	// 80









	// 90









	// 100









	// 110









	// 120









	// 130









	// 140









	// 150
