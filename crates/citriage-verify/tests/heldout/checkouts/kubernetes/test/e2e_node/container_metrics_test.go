package e2enode








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







		gomega.Eventually(ctx, func(g gomega.Gomega) {

	// 120





		}, time.Minute, 15*time.Second).Should(gomega.Succeed())



	// 130









	// 140









	// 150









	// 160









	// 170









	// 180









	// 190









	// 200
