/**
 * A class of thirty opens the Chinook sample database: the upstream script,
 * unmodified (NVARCHAR, DATETIME, NUMERIC(10,2), 15,000 rows), loads in one
 * import request, and a lesson of typical classroom queries answers exactly as
 * SQLite itself does (better-sqlite3 opened directly on the same script):
 * same columns, same rows, in the same order where ORDER BY fixes it.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { scratchDir } from './helpers/scratch-dir';
import { startServer, type TestServer } from './helpers/server';

const SCRIPT = fs.readFileSync(path.join(__dirname, 'fixtures/chinook/Chinook_Sqlite.sql'), 'utf8');

/** `ordered: false`: the query fixes no complete order, so rows are compared as sorted lists. */
interface LessonQuery {
  sql: string;
  ordered?: false;
}

const LESSON: LessonQuery[] = [
  // Reading one table
  { sql: 'SELECT * FROM Artist ORDER BY ArtistId LIMIT 10' },
  { sql: 'SELECT Name, Composer FROM Track WHERE AlbumId = 1 ORDER BY TrackId' },
  { sql: 'SELECT FirstName, LastName, Country FROM Customer WHERE Country = \'Brazil\' ORDER BY LastName' },
  { sql: 'SELECT Name FROM Track WHERE Name LIKE \'%love%\' ORDER BY Name, TrackId' },
  { sql: 'SELECT Name, Milliseconds FROM Track WHERE Milliseconds BETWEEN 200000 AND 210000 ORDER BY Milliseconds DESC, TrackId LIMIT 15' },
  { sql: 'SELECT DISTINCT Country FROM Customer ORDER BY Country' },
  { sql: 'SELECT DISTINCT BillingCity FROM Invoice', ordered: false },
  { sql: 'SELECT FirstName, LastName, Company FROM Customer WHERE Company IS NULL ORDER BY CustomerId LIMIT 10' },
  { sql: 'SELECT FirstName, LastName, Company FROM Customer WHERE Company IS NOT NULL ORDER BY CustomerId' },
  { sql: 'SELECT Name, UnitPrice FROM Track WHERE UnitPrice > 0.99 ORDER BY Name, TrackId LIMIT 20 OFFSET 5' },
  { sql: 'SELECT LastName, Title FROM Employee WHERE Title IN (\'Sales Support Agent\', \'IT Staff\') ORDER BY LastName' },
  // Aggregates and GROUP BY / HAVING
  { sql: 'SELECT COUNT(*) AS tracks, COUNT(Composer) AS with_composer, COUNT(DISTINCT Composer) AS composers FROM Track' },
  { sql: 'SELECT SUM(Total), AVG(Total), MIN(Total), MAX(Total) FROM Invoice' },
  { sql: 'SELECT BillingCountry, COUNT(*) AS invoices, SUM(Total) AS revenue FROM Invoice GROUP BY BillingCountry ORDER BY revenue DESC, BillingCountry' },
  { sql: 'SELECT BillingCountry, ROUND(AVG(Total), 2) AS average FROM Invoice GROUP BY BillingCountry HAVING COUNT(*) > 20 ORDER BY BillingCountry' },
  { sql: 'SELECT GenreId, COUNT(*) AS n, ROUND(AVG(Milliseconds) / 60000.0, 2) AS minutes FROM Track GROUP BY GenreId ORDER BY n DESC, GenreId' },
  { sql: 'SELECT AlbumId, SUM(UnitPrice) AS price FROM Track GROUP BY AlbumId HAVING SUM(UnitPrice) > 15 ORDER BY price DESC, AlbumId' },
  { sql: 'SELECT InvoiceId, SUM(UnitPrice * Quantity) AS total FROM InvoiceLine GROUP BY InvoiceId ORDER BY InvoiceId LIMIT 25' },
  { sql: 'SELECT Country, COUNT(*) FROM Customer GROUP BY Country HAVING COUNT(*) >= 3 ORDER BY 2 DESC, 1' },
  { sql: 'SELECT MediaTypeId, MAX(Bytes), MIN(Bytes) FROM Track GROUP BY MediaTypeId ORDER BY MediaTypeId' },
  // Joins
  { sql: 'SELECT al.Title, ar.Name FROM Album al JOIN Artist ar ON ar.ArtistId = al.ArtistId ORDER BY al.AlbumId LIMIT 30' },
  { sql: 'SELECT t.Name AS track, a.Title AS album, g.Name AS genre FROM Track t JOIN Album a ON a.AlbumId = t.AlbumId JOIN Genre g ON g.GenreId = t.GenreId WHERE g.Name = \'Jazz\' ORDER BY t.TrackId' },
  { sql: 'SELECT c.FirstName, c.LastName, e.FirstName AS rep FROM Customer c JOIN Employee e ON e.EmployeeId = c.SupportRepId ORDER BY c.CustomerId' },
  { sql: 'SELECT e.FirstName, e.LastName, m.FirstName AS manager FROM Employee e LEFT JOIN Employee m ON m.EmployeeId = e.ReportsTo ORDER BY e.EmployeeId' },
  { sql: 'SELECT ar.Name, COUNT(al.AlbumId) AS albums FROM Artist ar LEFT JOIN Album al ON al.ArtistId = ar.ArtistId GROUP BY ar.ArtistId ORDER BY albums DESC, ar.ArtistId LIMIT 20' },
  { sql: 'SELECT ar.Name FROM Artist ar LEFT JOIN Album al ON al.ArtistId = ar.ArtistId WHERE al.AlbumId IS NULL ORDER BY ar.Name' },
  { sql: 'SELECT p.Name, COUNT(pt.TrackId) AS tracks FROM Playlist p LEFT JOIN PlaylistTrack pt ON pt.PlaylistId = p.PlaylistId GROUP BY p.PlaylistId ORDER BY p.PlaylistId' },
  { sql: 'SELECT e.LastName, ROUND(SUM(i.Total), 2) AS sales FROM Employee e JOIN Customer c ON c.SupportRepId = e.EmployeeId JOIN Invoice i ON i.CustomerId = c.CustomerId GROUP BY e.EmployeeId ORDER BY sales DESC' },
  { sql: 'SELECT g.Name, ROUND(SUM(il.UnitPrice * il.Quantity), 2) AS revenue FROM InvoiceLine il JOIN Track t ON t.TrackId = il.TrackId JOIN Genre g ON g.GenreId = t.GenreId GROUP BY g.GenreId ORDER BY revenue DESC, g.Name' },
  { sql: 'SELECT m.Name, COUNT(*) FROM Track t JOIN MediaType m USING (MediaTypeId) GROUP BY m.Name ORDER BY m.Name' },
  // Subqueries
  { sql: 'SELECT Name, Milliseconds FROM Track WHERE Milliseconds > (SELECT AVG(Milliseconds) FROM Track) ORDER BY Milliseconds DESC, TrackId LIMIT 10' },
  { sql: 'SELECT FirstName, LastName FROM Customer WHERE CustomerId IN (SELECT CustomerId FROM Invoice WHERE Total > 20) ORDER BY CustomerId' },
  { sql: 'SELECT Title FROM Album a WHERE NOT EXISTS (SELECT 1 FROM Track t WHERE t.AlbumId = a.AlbumId AND t.GenreId = 1) ORDER BY AlbumId LIMIT 20' },
  { sql: 'SELECT Title, (SELECT COUNT(*) FROM Track t WHERE t.AlbumId = a.AlbumId) AS tracks FROM Album a ORDER BY tracks DESC, AlbumId LIMIT 10' },
  { sql: 'SELECT country, total FROM (SELECT BillingCountry AS country, SUM(Total) AS total FROM Invoice GROUP BY BillingCountry) WHERE total > 100 ORDER BY total DESC' },
  { sql: 'WITH per_customer AS (SELECT CustomerId, SUM(Total) AS spent FROM Invoice GROUP BY CustomerId) SELECT c.FirstName, c.LastName, p.spent FROM per_customer p JOIN Customer c USING (CustomerId) ORDER BY p.spent DESC, c.CustomerId LIMIT 5' },
  // Dates on InvoiceDate (TEXT holding ISO-8601)
  { sql: 'SELECT strftime(\'%Y\', InvoiceDate) AS year, COUNT(*), ROUND(SUM(Total), 2) FROM Invoice GROUP BY year ORDER BY year' },
  { sql: 'SELECT strftime(\'%Y-%m\', InvoiceDate) AS month, ROUND(SUM(Total), 2) FROM Invoice GROUP BY month ORDER BY month LIMIT 12' },
  { sql: 'SELECT InvoiceId, date(InvoiceDate) AS day, date(InvoiceDate, \'+30 days\') AS due FROM Invoice ORDER BY InvoiceId LIMIT 10' },
  { sql: 'SELECT InvoiceId, Total FROM Invoice WHERE InvoiceDate >= \'2022-01-01\' AND InvoiceDate < \'2022-02-01\' ORDER BY InvoiceId' },
  { sql: 'SELECT LastName, BirthDate, (julianday(HireDate) - julianday(BirthDate)) / 365.25 AS age_at_hire FROM Employee ORDER BY EmployeeId' },
  { sql: 'SELECT strftime(\'%w\', InvoiceDate) AS weekday, COUNT(*) FROM Invoice GROUP BY weekday ORDER BY weekday' },
  // CASE, expressions, strings
  { sql: 'SELECT Name, CASE WHEN Milliseconds < 180000 THEN \'short\' WHEN Milliseconds < 300000 THEN \'medium\' ELSE \'long\' END AS length FROM Track ORDER BY TrackId LIMIT 25' },
  { sql: 'SELECT CASE WHEN Total >= 10 THEN \'big\' ELSE \'small\' END AS size, COUNT(*) FROM Invoice GROUP BY size ORDER BY size' },
  { sql: 'SELECT UPPER(LastName) || \', \' || FirstName AS name, LENGTH(Email), SUBSTR(Phone, 1, 4) FROM Customer ORDER BY CustomerId LIMIT 15' },
  { sql: 'SELECT Name, COALESCE(Composer, \'(unknown)\') AS composer FROM Track WHERE AlbumId = 5 ORDER BY TrackId' },
  { sql: 'SELECT Name, UnitPrice * 1.21 AS with_vat, ROUND(Bytes / 1048576.0, 1) AS mb FROM Track ORDER BY TrackId LIMIT 10' },
  { sql: 'SELECT Name, Milliseconds / 60000 AS whole_minutes, Milliseconds % 60000 / 1000 AS seconds FROM Track ORDER BY TrackId LIMIT 10' },
  // Set operations
  { sql: 'SELECT City FROM Customer UNION SELECT City FROM Employee ORDER BY City' },
  { sql: 'SELECT Country FROM Customer INTERSECT SELECT Country FROM Employee' },
  { sql: 'SELECT BillingCountry FROM Invoice EXCEPT SELECT Country FROM Employee ORDER BY 1' },
];

function expectedAnswers(): Array<{ columns: string[]; rows: unknown[][] }> {
  const db = new Database(':memory:');
  db.exec(SCRIPT);
  const answers = LESSON.map(({ sql }) => {
    const statement = db.prepare(sql);
    return { columns: statement.columns().map((column) => column.name), rows: statement.raw(true).all() as unknown[][] };
  });
  db.close();
  return answers;
}

function sorted(rows: unknown[][]): unknown[][] {
  return [...rows].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
}

t.test('the unmodified Chinook script loads in one import and a lesson answers as SQLite does', async (tt) => {
  const dir = scratchDir(tt);
  const server: TestServer = await startServer(['-dir', path.join(dir, 'data')], { cwd: dir });
  tt.teardown(() => server.stop());
  tt.equal((await server.post('/dbs', { db: 'chinook' })).status, 201);
  const loaded = await server.request('POST', '/dbs/chinook/import', { rawBody: SCRIPT, headers: { 'content-type': 'application/sql' } });
  tt.equal(loaded.status, 200, loaded.text.slice(0, 300));
  tt.match(loaded.body, { ok: true, db: 'chinook.db', format: 'sql', statements: 57, changes: 15607 });

  tt.ok(LESSON.length >= 40, `${LESSON.length} queries`);
  const expected = expectedAnswers();
  // The whole lesson as one batch, as a teacher's prepared script would be sent.
  const answer = await server.exec('chinook', LESSON.map((query) => query.sql).join(';\n'));
  tt.equal(answer.status, 200, answer.text.slice(0, 300));
  for (const [index, query] of LESSON.entries()) {
    const got = answer.body.results[index] as { columns: string[]; rows: unknown[][] };
    const want = expected[index] as { columns: string[]; rows: unknown[][] };
    tt.same(got.columns, want.columns, `columns of ${query.sql}`);
    tt.ok(want.rows.length > 0, `the query returns rows: ${query.sql}`);
    if (query.ordered === false) tt.same(sorted(got.rows), sorted(want.rows), query.sql);
    else tt.same(got.rows, want.rows, query.sql);
  }
  // better-sqlite3 12 on Node 24 aborted the whole server process here (a statement's destructor ran after its environment was gone).
  const health = await server.get('/health');
  tt.equal(health.status, 200, 'the server that imported Chinook still answers');
  tt.equal(server.child.exitCode, null, 'and is the same process, never restarted');
  tt.equal(server.child.signalCode, null);
});
