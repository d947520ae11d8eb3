package volumebinding








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









	// 130









	// 140









	// 150









	// 160









	// 170









	// 180





	waitTimeout := 10 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)


	// 190









	// 200









	// 210









	// 220









	// 230









	// 240









	// 250









	// 260









	// 270









	// 280









	// 290









	// 300
