func process(items []int) int {
	total := 0
	for _, it := range items {
		total += it
	}
	if total > 100 {
		total = 100
	}
	return total
}
