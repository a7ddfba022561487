module recallref

go 1.27
