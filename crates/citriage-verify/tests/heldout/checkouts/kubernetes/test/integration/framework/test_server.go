package framework








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









	// 190









	// 200









	// 210







func waitForHealthz(ctx context.Context, client *http.Client, url string) error {

	// 220




	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {




	// 230









}









	// 250









	// 260
