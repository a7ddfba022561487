module goeval

go 1.21
