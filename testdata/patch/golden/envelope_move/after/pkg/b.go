package pkg

const B = 2
