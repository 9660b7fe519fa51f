package pkg

const A = 1
